#include "core/codes.hpp"

#include <cstddef>

namespace pgsw {
namespace {

template <typename Code, size_t N>
const char *lookup(const char *const (&names)[N], Code code) noexcept {
    const auto index = static_cast<size_t>(code);
    return index < N ? names[index] : "unknown";
}

const char *const kBackendNames[] = {
    "unknown",
    "client backend",
    "parallel worker",
    "background worker",
    "autovacuum launcher",
    "autovacuum worker",
    "background writer",
    "checkpointer",
    "walwriter",
    "walsender",
    "walreceiver",
    "walsummarizer",
    "startup",
    "archiver",
    "logger",
    "slotsync worker",
    "io worker",
    "standalone backend",
    "dead-end client backend",
};
static_assert(sizeof(kBackendNames) / sizeof(kBackendNames[0]) ==
              static_cast<size_t>(BackendKind::Count));

const char *const kStateNames[] = {
    nullptr,
    "starting",
    "idle",
    "active",
    "idle in transaction",
    "fastpath function call",
    "idle in transaction (aborted)",
    "disabled",
};
static_assert(sizeof(kStateNames) / sizeof(kStateNames[0]) ==
              static_cast<size_t>(BackendStateCode::Count));

const char *const kObjectNames[] = {"relation", "temp relation", "wal"};
const char *const kContextNames[] = {"bulkread", "bulkwrite", "normal", "vacuum", "init"};
const char *const kOpNames[] = {"evict", "extend", "fsync", "hit",
                                "read",  "reuse",  "write", "writeback"};

}  // namespace

const char *backend_kind_name(BackendKind kind) noexcept {
    return lookup(kBackendNames, kind);
}

const char *backend_state_name(BackendStateCode state) noexcept {
    const auto index = static_cast<size_t>(state);
    return index < static_cast<size_t>(BackendStateCode::Count) ? kStateNames[index] : "unknown";
}

const char *io_object_name(IoObjectCode object) noexcept {
    return lookup(kObjectNames, object);
}
const char *io_context_name(IoContextCode context) noexcept {
    return lookup(kContextNames, context);
}
const char *io_op_name(IoOpCode op) noexcept {
    return lookup(kOpNames, op);
}

bool is_foreground_active(BackendKind kind, BackendStateCode state) noexcept {
    const bool foreground =
        kind == BackendKind::ClientBackend || kind == BackendKind::ParallelWorker;
    const bool running = state == BackendStateCode::Active ||
                         state == BackendStateCode::FastpathFunctionCall ||
                         (kind == BackendKind::ParallelWorker && state == BackendStateCode::None);
    return foreground && running;
}

}  // namespace pgsw
