// Machine places (engine/machine_places.h): the CPUs' turns shared by one user's processes. Real
// processes (fork) hold, die and stop; every set is this test's own (a key of its own), removed at
// the end.
#include <sched.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "engine/decoder_pool.h"
#include "engine/machine_places.h"
#include "test_support.h"

#ifndef MIBZ2_BINARY
#error "MIBZ2_BINARY must name the mibz2 program"
#endif

namespace mibz2::engine {
namespace {

using namespace std::chrono_literals;

// A key of this test's own, and its set removed at the end.
class OwnKey {
 public:
  OwnKey() {
    static std::atomic<int> n{0};
    const std::string tag = "machine places test " + std::to_string(getpid()) + " " + std::to_string(n++);
    key_ = MachinePlaces::key_for(geteuid(), tag.data(), tag.size());
    remove();
  }
  ~OwnKey() { remove(); }
  key_t key() const { return key_; }
  MachinePlaces::Settings settings(unsigned places, std::chrono::milliseconds wait) const {
    return MachinePlaces::Settings{key_, places, wait};
  }

 private:
  void remove() const {
    const int id = semget(key_, 0, 0);
    if (id >= 0) semctl(id, 0, IPC_RMID);
  }
  key_t key_;
};

// A child process that takes `count` places of `settings`, says so on a pipe, then waits for a
// byte on another (or for a signal) and exits, giving them back.
class Holder {
 public:
  Holder(const MachinePlaces::Settings& settings, unsigned count) {
    int ready[2], go[2];
    if (pipe(ready) != 0 || pipe(go) != 0) ADD_FAILURE() << "pipe";
    pid_ = fork();
    if (pid_ == 0) {
      close(ready[0]);
      close(go[1]);
      MachinePlaces places(settings);
      std::vector<MachinePlaces::Turn> turns;
      for (unsigned i = 0; i < count; ++i) turns.push_back(places.take());
      const char held = std::all_of(turns.begin(), turns.end(), [](auto& t) { return t.held(); }) ? 'y' : 'n';
      if (write(ready[1], &held, 1) != 1) _exit(2);
      char c;
      if (read(go[0], &c, 1) != 1) _exit(3);
      turns.clear();
      _exit(0);
    }
    close(ready[1]);
    close(go[0]);
    go_ = go[1];
    char held = 0;
    EXPECT_EQ(read(ready[0], &held, 1), 1);
    EXPECT_EQ(held, 'y') << "the holder did not get its places";
    close(ready[0]);
  }
  ~Holder() {
    kill(pid_, SIGCONT);
    if (go_ >= 0) close(go_);  // EOF ends the child's read
    waitpid(pid_, nullptr, 0);
  }
  void let_go() {
    const char c = 'g';
    EXPECT_EQ(write(go_, &c, 1), 1);
    EXPECT_EQ(waitpid(pid_, nullptr, 0), pid_);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int go_ = -1;
};

template <class F>
std::chrono::milliseconds timed(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
}

TEST(MachinePlacesConcurrent, AJobWaitsForThePlaceAnotherProcessHolds) {
  OwnKey key;
  MachinePlaces places(key.settings(1, 60s));
  ASSERT_TRUE(places.sharing()) << places.why_not();
  Holder holder(key.settings(1, 60s), 1);
  auto taken = std::async(std::launch::async, [&] { return places.take().held(); });
  EXPECT_EQ(taken.wait_for(300ms), std::future_status::timeout) << "took the place another process holds";
  holder.let_go();
  ASSERT_EQ(taken.wait_for(30s), std::future_status::ready);
  EXPECT_TRUE(taken.get());
}

TEST(MachinePlacesConcurrent, ThePlacesOfAProcessKilledWhileHoldingThemComeBack) {
  OwnKey key;
  MachinePlaces places(key.settings(2, 60s));
  ASSERT_TRUE(places.sharing()) << places.why_not();
  Holder holder(key.settings(2, 60s), 2);
  kill(holder.pid(), SIGKILL);
  // The kernel undoes a dead process's operations (SEM_UNDO): both places are free again.
  MachinePlaces::Turn a = places.take(), b = places.take();
  EXPECT_TRUE(a.held());
  EXPECT_TRUE(b.held());
  EXPECT_FALSE(places.waits_ran_out());
}

TEST(MachinePlacesConcurrent, AWaitForAStoppedHolderIsBoundedAndNotRepeated) {
  OwnKey key;
  MachinePlaces places(key.settings(1, 500ms));
  Holder holder(key.settings(1, 500ms), 1);
  kill(holder.pid(), SIGSTOP);  // as ^Z stops a process that holds the place
  bool held = true;
  const auto first = timed([&] { held = places.take().held(); });
  EXPECT_FALSE(held);
  EXPECT_GE(first, 450ms);
  EXPECT_TRUE(places.waits_ran_out());
  // The next take only tries: the process runs as if unshared while the holder is stopped.
  const auto second = timed([&] { held = places.take().held(); });
  EXPECT_FALSE(held);
  EXPECT_LT(second, 400ms) << "waited again for a place a stopped process holds";
  kill(holder.pid(), SIGCONT);
  holder.let_go();
  EXPECT_TRUE(places.take().held());
  EXPECT_FALSE(places.waits_ran_out()) << "a place came again, so takes wait again";
}

TEST(MachinePlacesConcurrent, ThePoolRunsNoMoreJobsAtOnceThanTheMachineHasPlaces) {
  OwnKey key;
  MachinePlaces places(key.settings(1, 60s));
  std::atomic<int> running{0}, most{0}, done{0};
  DecoderPool pool(4, 4, &places);
  for (int i = 0; i < 16; ++i)
    pool.submit(Priority::kDemand, [&](WorkerContext&) {
      const int now = ++running;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {}
      std::this_thread::sleep_for(5ms);
      --running;
      ++done;
    });
  ASSERT_TRUE(test::eventually([&] { return done == 16; }));
  EXPECT_EQ(most.load(), 1) << "four places of the process, one of the machine";
  // The pool is idle, and its workers hold no place: another process would get it.
  EXPECT_TRUE(places.take().held()) << "an idle worker kept its place";
}

TEST(MachinePlacesConcurrent, ASetRemovedWhileInUseEndsSharing) {
  OwnKey key;
  MachinePlaces places(key.settings(1, 60s));
  MachinePlaces::Turn turn = places.take();
  ASSERT_TRUE(turn.held());
  ASSERT_EQ(semctl(semget(key.key(), 0, 0), 0, IPC_RMID), 0);
  EXPECT_FALSE(places.take().held());
  EXPECT_FALSE(places.sharing());
}

// --- sets that are not believed ---

TEST(MachinePlaces, ASetOpenToOthersIsNotBelieved) {
  OwnKey key;
  ASSERT_GE(semget(key.key(), 3, IPC_CREAT | 0666), 0);
  MachinePlaces places(key.settings(2, 1s));
  EXPECT_FALSE(places.sharing());
  EXPECT_NE(places.why_not().find("not this user's own"), std::string::npos) << places.why_not();
  EXPECT_FALSE(places.take().held());
}

TEST(MachinePlaces, ASetOfAnotherShapeOrWithOtherMarksIsNotBelieved) {
  {
    OwnKey key;
    ASSERT_GE(semget(key.key(), 1, IPC_CREAT | 0600), 0);  // too few semaphores for the key
    MachinePlaces places(key.settings(2, 1s));
    EXPECT_FALSE(places.sharing());
  }
  OwnKey key;
  const int id = semget(key.key(), 3, IPC_CREAT | 0600);
  ASSERT_GE(id, 0);
  ASSERT_EQ(semctl(id, 1, SETVAL, 7), 0);  // someone else's magic
  MachinePlaces places(key.settings(2, 1s));
  EXPECT_FALSE(places.sharing());
  EXPECT_NE(places.why_not().find("not made by mibz2"), std::string::npos) << places.why_not();
}

TEST(MachinePlaces, ASetMadeByAnotherUserIsNotBelieved) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to make a set as another user";
  OwnKey key;
  const pid_t child = fork();
  if (child == 0) {
    // nobody makes the set under our key, open to us (root opens anything anyway).
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
    _exit(semget(key.key(), 3, IPC_CREAT | 0600) >= 0 ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  MachinePlaces places(key.settings(2, 1s));
  EXPECT_FALSE(places.sharing());
  EXPECT_NE(places.why_not().find("creator uid 65534"), std::string::npos) << places.why_not();
}

TEST(MachinePlaces, TheFirstProcessFillsTheSetAndTheNextOnesFindItFilled) {
  OwnKey key;
  MachinePlaces first(key.settings(3, 1s));
  ASSERT_TRUE(first.sharing()) << first.why_not();
  MachinePlaces second(key.settings(5, 1s));  // finds 3 places, does not add its 5
  ASSERT_TRUE(second.sharing()) << second.why_not();
  EXPECT_EQ(semctl(semget(key.key(), 0, 0), 0, GETVAL), 3);
}

// The programs take turns when asked: mibz2 cat on one CPU (taskset: a set of its own) with
// MIBZ2_SHARE_CPUS=1 makes that CPU's set (of two places: one beside the CPU's) and gives its
// places back; without it, or with another value, it leaves the set unmade.
TEST(MachinePlacesConcurrent, Mibz2SharesTheCpusWhenAsked) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &mine)) ++cpu;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  const key_t key = MachinePlaces::key_for(geteuid(), &one, sizeof one);
  const auto remove = [key] {
    if (const int id = semget(key, 0, 0); id >= 0) semctl(id, 0, IPC_RMID);
  };
  remove();
  test::TempDir dir;
  const test::Bytes data = test::text_bytes(2'000'000, 5);
  test::write_file(dir.file("a.bz2"), test::as_span(test::libbz2_compress(test::as_span(data), 1)));
  const auto cat = [&](const std::string& env) {
    return test::run_command(env + " XDG_CACHE_HOME=" + test::shell_quote(dir.file("cache").string()) +
                             " taskset -c " + std::to_string(cpu) + " " + test::shell_quote(MIBZ2_BINARY) +
                             " cat -j 2 " + test::shell_quote(dir.file("a.bz2").string()));
  };
  for (const char* env : {"MIBZ2_SHARE_CPUS=", "MIBZ2_SHARE_CPUS=0", "MIBZ2_SHARE_CPUS=yes"}) {
    test::CommandResult off = cat(env);
    ASSERT_EQ(off.status, 0);
    EXPECT_TRUE(off.out == data);
    EXPECT_LT(semget(key, 0, 0), 0) << env << " made the set";
  }
  test::CommandResult on = cat("MIBZ2_SHARE_CPUS=1");
  ASSERT_EQ(on.status, 0);
  EXPECT_TRUE(on.out == data);
  const int id = semget(key, 0, 0);
  EXPECT_GE(id, 0) << "mibz2 cat did not share the CPU";
  EXPECT_EQ(semctl(id, 0, GETVAL), 2) << "one CPU's places (it and one more) not all given back";
  remove();
}

}  // namespace
}  // namespace mibz2::engine
