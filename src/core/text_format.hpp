#pragma once
// printf into a std::string, for the symptoms' evidence and the report's lines.

#include <cstdarg>
#include <cstdio>
#include <string>

namespace pgsw {

// Texts are cut at 511 bytes: an evidence sentence or a report line is far shorter.
inline std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string format(const char *fmt, ...) {
    char buffer[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(buffer, sizeof buffer, fmt, args);
    va_end(args);
    return buffer;
}

}  // namespace pgsw
