// Task 4, bonus part 4d — the Hopper (sm_90a) path of the bf16 backward's key tiles (interface:
// task4_bf16_backward/task4_bf16_backward.h).
//
// Build and run: as flash_attention_bf16_backward.cu (make task4-bf16-backward, make bench-task4-bf16-backward); the
// Makefile compiles this file for sm_80 + sm_90a (wgmma exists only for the "a" target) with -DATTNLAB_SM90A=1.
// This file is empty in the student kit: the bonus is flash_attention_bf16_backward.cu. (It is compiled for sm_80 and
// sm_90a, so a Hopper-only path of your own — wgmma, TMA — may live here, called from there.)
