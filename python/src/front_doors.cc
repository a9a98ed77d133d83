#include "front_doors.h"

#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace mibz2::python {
namespace {

struct Made {
  DoorSettings settings;
  pid_t pid;
  std::shared_ptr<catalog::FrontDoor> door;
};

// Taken only with the GIL held (by the binding's calls), as os.fork() holds it: no thread can hold
// it at a fork, so it needs no base::ProcessMutex (which it could not be: a front door is made
// under it, and a ProcessMutex is a leaf).
std::mutex registry_mu;
// Every front door made in this process and not released; those of a parent process (after a fork)
// are dropped from the list without being destroyed (see front_doors.h).
std::vector<Made>* registry() {
  static auto* doors = new std::vector<Made>();  // never destroyed: see release_front_doors
  return doors;
}

// Drops the front doors a parent process made: never destroyed, never used.
void leave_inherited(std::vector<Made>& doors) {
  const pid_t me = getpid();
  for (Made& m : doors)
    if (m.pid != me) new std::shared_ptr<catalog::FrontDoor>(std::move(m.door));
  std::erase_if(doors, [](const Made& m) { return !m.door; });
}

}  // namespace

std::shared_ptr<catalog::FrontDoor> front_door_for(const DoorSettings& settings) {
  std::lock_guard lk(registry_mu);
  auto& doors = *registry();
  leave_inherited(doors);
  for (const Made& m : doors)
    if (m.settings == settings) return m.door;
  doors.push_back({settings, getpid(),
                   std::make_shared<catalog::FrontDoor>(catalog::FrontDoorOptions{
                       .threads = settings.threads,
                       .cache_size = settings.cache_size,
                       .index_dir = settings.index_dir,
                       .s3 = settings.s3})});
  return doors.back().door;
}

void release_front_doors() {
  std::lock_guard lk(registry_mu);
  auto& doors = *registry();
  leave_inherited(doors);
  doors.clear();
}

}  // namespace mibz2::python
