// fmt_impl.cpp — the compiled part of {fmt} (Debian's libfmt-dev headers), built once and linked into every
// program, as the library's own src/format.cc is.
//
// Why not FMT_HEADER_ONLY: it compiles fmt's implementation again in every translation unit that includes
// <fmt/format.h> (about 2.6 s of the ~3 s a small harness file takes, over 130 files). Why not -lfmt: Debian
// ships only the shared library, and the GPU machines that run binaries built here do not have it.
// The explicit instantiations below are those fmt's headers declare extern or leave undefined (fmt 9).
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
