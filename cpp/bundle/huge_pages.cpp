#include "bundle/huge_pages.h"

namespace sliceflow::bundle {

// One instance for the process (defined here, not in the header, so that it is one object
// whatever includes the header).
arrow::BlockCache& HugeBlocks::cache() {
  static arrow::BlockCache instance(kDefaultMaxBlocks, kDefaultMaxBytes);
  return instance;
}

}  // namespace sliceflow::bundle
