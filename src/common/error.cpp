#include "common/error.h"

namespace tisa {

void throw_internal(const char* file, int line, const std::string& what) {
  throw Error(what + " (at " + file + ":" + std::to_string(line) + ")");
}

}  // namespace tisa
