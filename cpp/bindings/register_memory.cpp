// sliceflow._core.memory: the limits of the process-wide caches (memory/limits.h), by cache
// name ("buffers", "huge_pages"). sliceflow.memory is the Python API over these.
#include <pybind11/pybind11.h>

#include <string>

#include "bindings/register.h"
#include "memory/limits.h"

namespace py = pybind11;

namespace sliceflow::bindings {

void register_memory(py::module_& m) {
  using memory::cache_named;
  // Environment limits apply when the module loads, before any kernel can allocate; a
  // malformed value fails the import with the variable's name.
  memory::apply_environment();

  m.attr("max_blocks") = memory::max_blocks_limit();
  m.def(
      "limits",
      [](const std::string& cache) {
        const memory::Limits l = memory::limits(cache_named(cache));
        return py::make_tuple(l.blocks, l.bytes);
      },
      py::arg("cache"), "(blocks, bytes) the cache may keep");
  m.def(
      "default_limits",
      [](const std::string& cache) {
        const memory::Limits l = memory::default_limits(cache_named(cache));
        return py::make_tuple(l.blocks, l.bytes);
      },
      py::arg("cache"), "(blocks, bytes) the cache keeps when nothing sets its limits");
  m.def(
      "set_limits",
      [](const std::string& cache, size_t blocks, size_t bytes) {
        return memory::set_limits(cache_named(cache), memory::Limits{blocks, bytes});
      },
      py::arg("cache"), py::arg("blocks"), py::arg("bytes"),
      "Sets the cache's limits, freeing what no longer fits; returns the bytes freed");
  m.def(
      "held",
      [](const std::string& cache) {
        const memory::Held h = memory::held(cache_named(cache));
        return py::make_tuple(h.blocks, h.bytes);
      },
      py::arg("cache"), "(blocks, bytes) the cache holds now");
  m.def(
      "release", [](const std::string& cache) { return memory::release(cache_named(cache)); },
      py::arg("cache"), "Frees what the cache holds; returns the bytes freed");
  m.def(
      "parse_byte_size",
      [](const std::string& text, const std::string& what) {
        return memory::parse_byte_size(text, what);
      },
      py::arg("text"), py::arg("what"), "Bytes of a Spark byte string such as '64m'");
  m.def(
      "parse_count",
      [](const std::string& text, const std::string& what) {
        return memory::parse_count(text, what);
      },
      py::arg("text"), py::arg("what"), "A block count");
}

}  // namespace sliceflow::bindings
