// Include first in every src/core header: the pure C++ core must never see PostgreSQL's
// headers (their macros redefine snprintf, unlink, ... and their longjmp-based errors must not
// meet C++ objects). src/pg/ includes core headers before postgres.h.
#pragma once

#if defined(PG_VERSION_NUM) || defined(POSTGRES_H)
#error "src/core headers are pure C++: include them before postgres.h, never after"
#endif

#include "core/tick_path.hpp"
