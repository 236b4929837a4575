#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "core/names.hpp"

namespace pgsw {
namespace {

std::unique_ptr<NameDictionary> empty_dictionary() {
    auto names = std::make_unique<NameDictionary>();
    *names = NameDictionary{};
    return names;
}

TEST(Names, InternGivesStableIdsPerKindAndName) {
    auto names = empty_dictionary();
    NameWriter writer(*names);
    const uint16_t sda = writer.intern(NameKind::Device, "sda1");
    const uint16_t slot = writer.intern(NameKind::Slot, "sda1");  // same text, other kind
    EXPECT_NE(sda, 0);
    EXPECT_NE(slot, sda);
    EXPECT_EQ(writer.intern(NameKind::Device, "sda1"), sda);
    EXPECT_EQ(name_of(*names, sda), "sda1");
    EXPECT_EQ(name_of(*names, sda, NameKind::Device), "sda1");
    EXPECT_EQ(name_of(*names, sda, NameKind::Slot), "");  // asked for another kind
    EXPECT_EQ(name_of(*names, 0), "");
    EXPECT_EQ(name_of(*names, 999), "");  // not published
}

TEST(Names, LongNamesAreCutAndStillFound) {
    auto names = empty_dictionary();
    NameWriter writer(*names);
    const std::string long_name(100, 'x');
    const uint16_t id = writer.intern(NameKind::Slot, long_name);
    EXPECT_EQ(name_of(*names, id).size(), kNameMaxLength);
    EXPECT_EQ(writer.intern(NameKind::Slot, long_name), id);
}

TEST(Names, FullDictionaryRefusesWithIdZeroAndCounts) {
    auto names = empty_dictionary();
    NameWriter writer(*names);
    for (uint32_t i = 1; i < kNameCapacity; ++i)
        ASSERT_NE(writer.intern(NameKind::Slot, "s" + std::to_string(i)), 0);
    EXPECT_EQ(writer.intern(NameKind::Slot, "one too many"), 0);
    EXPECT_EQ(names->refused, 1u);
    EXPECT_EQ(writer.intern(NameKind::Slot, "s7"), 7);  // old names still found
}

TEST(Names, ReindexAfterRestoreFindsRestoredNames) {
    auto names = empty_dictionary();
    uint16_t id = 0;
    {
        NameWriter first(*names);
        first.intern(NameKind::Device, "loop0");
        id = first.intern(NameKind::WaitEvent, "MyEvent");
    }
    NameWriter second(*names);  // a new worker over restored names
    EXPECT_EQ(second.intern(NameKind::WaitEvent, "MyEvent"), id);
    EXPECT_EQ(second.intern(NameKind::Device, "loop1"), id + 1);
}

TEST(Names, CustomWaitEventCodes) {
    const uint32_t stored = kCustomWaitEventClass | 42;
    EXPECT_TRUE(is_custom_wait_event(stored));
    EXPECT_EQ(custom_wait_event_name(stored), 42);
    EXPECT_FALSE(is_custom_wait_event(0x07000001));  // a raw extension wait
}

}  // namespace
}  // namespace pgsw
