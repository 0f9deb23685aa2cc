// tests/unit/test_mpi_watchdog.cpp — describe_stall, the diagnosis of Note [Stall diagnosis]:
// which ranks had not joined the collective, which did not answer, and the text when all joined.
#include <cstdint>
#include <optional>
#include <vector>

#include <doctest/doctest.h>

#include "distributed/mpi_watchdog.hpp"

namespace mnist_ddp::testing {
namespace {

using distributed::describe_stall;
using Counts = std::vector<std::optional<std::int64_t>>;

TEST_CASE("describe_stall names the ranks behind the collective with their counts") {
  // Rank 0 waits in collective #7; rank 1 joined it, rank 2 is at #6, rank 3 at #5.
  CHECK(describe_stall(0, 7, Counts{7, 7, 6, 5}) ==
        "rank 0 waits for rank(s) 2 (at #6), 3 (at #5) had not joined");
}

TEST_CASE("describe_stall names the ranks that did not answer, before those behind") {
  CHECK(describe_stall(1, 12, Counts{std::nullopt, 12, 11, std::nullopt}) ==
        "rank 1 waits for rank(s) 0, 3 not responding (stalled, dead or busy); rank(s) 2 (at "
        "#11) had not joined");
}

TEST_CASE("describe_stall names each rank's host where it knows them") {
  CHECK(describe_stall(1, 12, Counts{std::nullopt, 12, 11}, {"gpu01", "gpu01", "gpu02"}) ==
        "rank 1 waits for rank(s) 0@gpu01 not responding (stalled, dead or busy); rank(s) "
        "2@gpu02 (at #11) had not joined");
}

TEST_CASE("a rank ahead of the collective has joined it") {
  CHECK(describe_stall(2, 3, Counts{4, 3, 3}) ==
        "rank 2 waits for every rank has joined; the transport itself is stuck");
}

TEST_CASE("the waiting rank's own count never counts against it") {
  // Its own entry may hold anything: it is the rank that asks.
  CHECK(describe_stall(1, 9, Counts{9, 0}) ==
        "rank 1 waits for every rank has joined; the transport itself is stuck");
}

}  // namespace
}  // namespace mnist_ddp::testing
