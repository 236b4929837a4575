// The one place pg_storage_wait includes PostgreSQL's headers. Include it after every standard,
// Boost and src/core header: port.h redefines snprintf, unlink, ... as macros.
#pragma once

#include "core/codes.hpp"  // for pg/compat.hpp, included at the end

extern "C" {
#include "postgres.h"

#include "access/twophase.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/array.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/wait_event.h"
}

// The supported majors are checked there, before any of our own code compiles.
#include "pg/compat.hpp"
