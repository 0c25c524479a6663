// The process-wide cache of freed huge-page blocks (see huge_pages.h).
#include "memory/huge_pages.h"

namespace sliceflow::memory {

// One instance for the process (defined here, not in the header, so that it is one object
// whatever includes the header).
BlockCache& HugeBlocks::cache() {
  static BlockCache instance(kDefaultMaxBlocks, kDefaultMaxBytes);
  return instance;
}

}  // namespace sliceflow::memory
