// Task 4, bonus part — the Hopper (sm_90a) path of the bf16 forward (interface: task4_bf16/task4_bf16.h).
//
// Build and run: as flash_attention_bf16.cu (make task4-bf16, make bench-task4-bf16); the Makefile compiles this
// file for sm_80 + sm_90a (wgmma and setmaxnreg exist only for the "a" target) with -DATTNLAB_SM90A=1.
// This file is empty in the student kit: the bonus is flash_attention_bf16.cu. (It is compiled for sm_80 and
// sm_90a, so a Hopper-only path of your own — wgmma, TMA — may live here, called from there.)
