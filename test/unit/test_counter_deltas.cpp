#include <gtest/gtest.h>

#include "core/counter_deltas.hpp"

namespace pgsw {
namespace {

using Deltas = CounterDeltas<2>;
using Result = Deltas::Result;

Result read(Deltas &d, uint64_t key, uint64_t a, uint64_t b, Deltas::Values &delta) {
    return d.observe(key, {a, b}, delta);
}

TEST(CounterDeltas, FirstSightIsBaselineThenDeltas) {
    Deltas d(8);
    Deltas::Values delta{};
    d.begin();
    EXPECT_EQ(read(d, 5, 100, 10, delta), Result::Baseline);
    d.end();
    d.begin();
    EXPECT_EQ(read(d, 5, 130, 12, delta), Result::Delta);
    EXPECT_EQ(delta[0], 30u);
    EXPECT_EQ(delta[1], 2u);
    d.end();
}

TEST(CounterDeltas, ACounterGoingDownIsAResetAndRebaselines) {
    Deltas d(8);
    Deltas::Values delta{};
    d.begin(), read(d, 1, 100, 100, delta), d.end();
    d.begin();
    EXPECT_EQ(read(d, 1, 5, 200, delta), Result::Reset);  // one counter went down
    d.end();
    EXPECT_EQ(d.resets(), 1u);
    d.begin();
    EXPECT_EQ(read(d, 1, 7, 201, delta), Result::Delta);  // measured from the reset values
    EXPECT_EQ(delta[0], 2u);
    d.end();
}

TEST(CounterDeltas, KeysNotSeenAreForgotten) {
    Deltas d(8);
    Deltas::Values delta{};
    d.begin(), read(d, 1, 10, 10, delta), read(d, 2, 10, 10, delta), d.end();
    d.begin(), read(d, 1, 11, 10, delta), d.end();  // database 2 dropped
    EXPECT_EQ(d.keys(), 1u);
    d.begin();
    EXPECT_EQ(read(d, 2, 500, 500, delta), Result::Baseline);  // re-created: no huge delta
    d.end();
}

TEST(CounterDeltas, KeysBeyondCapacityAreRefusedAndCounted) {
    Deltas d(2);
    Deltas::Values delta{};
    d.begin();
    read(d, 1, 0, 0, delta), read(d, 2, 0, 0, delta);
    EXPECT_EQ(read(d, 3, 0, 0, delta), Result::Full);
    d.end();
    EXPECT_EQ(d.keys_refused(), 1u);
}

}  // namespace
}  // namespace pgsw
