// utf8.cpp — see utf8.h.
#include "common/llm/utf8.h"

namespace llm {

size_t first_invalid_utf8(const std::string& s, size_t from) {
    for (size_t i = from; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return i;
        for (size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return i;
        i += n;
    }
    return std::string::npos;
}

std::string printable(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
        const size_t bad = first_invalid_utf8(s, i);
        if (bad == std::string::npos) return out.append(s, i, std::string::npos);
        out.append(s, i, bad - i).append("\xEF\xBF\xBD");
        i = bad + 1;
    }
    return out;
}

}  // namespace llm
