#include "gtest/gtest.h"
TEST(Placeholder, Overlay) {}
