// tests/unit/test_main.cpp — provides: main for the unit tests (doctest's own).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
