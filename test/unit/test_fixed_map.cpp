// FixedMap (the sampler's allocation-free tables) and RecentValues (the few recent keys
// searched before them).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/fixed_map.hpp"

namespace pgsw {
namespace {

struct IdentityHash {
    size_t operator()(uint32_t k) const noexcept { return k; }
};

TEST(FixedMap, InsertsFindsAndRefusesBeyondCapacity) {
    FixedMap<uint32_t, int, IdentityHash> map(3);
    *map.find_or_insert(7) = 70;
    *map.find_or_insert(23) = 230;  // collides with 7 in a 16-slot table: probes on
    ASSERT_NE(map.find(7), nullptr);
    EXPECT_EQ(*map.find(7), 70);
    EXPECT_EQ(*map.find(23), 230);
    EXPECT_EQ(map.find(39), nullptr);
    EXPECT_NE(map.find_or_insert(39), nullptr);
    EXPECT_EQ(map.find_or_insert(55), nullptr) << "a fourth key exceeds max_entries";
    EXPECT_EQ(*map.find_or_insert(7), 70) << "an existing key is found even when full";
    EXPECT_EQ(map.size(), 3u);
}

TEST(FixedMap, ClearForgetsEveryKeyAndVisitsInInsertionOrder) {
    FixedMap<uint32_t, int, IdentityHash> map(4);
    for (uint32_t k : {5u, 1u, 21u})
        *map.find_or_insert(k) = int(k);
    std::vector<uint32_t> order;
    map.for_each([&](uint32_t k, int) { order.push_back(k); });
    EXPECT_EQ(order, (std::vector<uint32_t>{5, 1, 21}));
    map.clear();
    EXPECT_EQ(map.size(), 0u);
    EXPECT_EQ(map.find(21), nullptr) << "a probe chain ends at the cleared slot";
    EXPECT_EQ(*map.find_or_insert(21), 0) << "re-inserted keys start value-initialised";
}

TEST(RecentValues, FindsWhatItRemembers) {
    RecentValues<uint32_t, char, 4> recent;
    EXPECT_EQ(recent.find(0), nullptr) << "an empty cache holds no key, not even 0";
    recent.remember(0, 'c');
    recent.remember(0x0A000001, 'r');
    ASSERT_NE(recent.find(0), nullptr);
    EXPECT_EQ(*recent.find(0), 'c');
    EXPECT_EQ(*recent.find(0x0A000001), 'r');
    EXPECT_EQ(recent.find(0x0A000002), nullptr);
    EXPECT_EQ(recent.size(), 2u);
}

TEST(RecentValues, ReplacesTheOldestOnceFull) {
    RecentValues<uint32_t, int, 3> recent;
    for (uint32_t k = 1; k <= 3; ++k)
        recent.remember(k, int(k) * 10);
    recent.remember(4, 40);  // replaces 1
    EXPECT_EQ(recent.find(1), nullptr);
    for (uint32_t k = 2; k <= 4; ++k) {
        ASSERT_NE(recent.find(k), nullptr) << k;
        EXPECT_EQ(*recent.find(k), int(k) * 10);
    }
    recent.remember(5, 50);  // then 2
    EXPECT_EQ(recent.find(2), nullptr);
    EXPECT_EQ(*recent.find(3), 30);
    EXPECT_EQ(recent.size(), 3u);
}

}  // namespace
}  // namespace pgsw
