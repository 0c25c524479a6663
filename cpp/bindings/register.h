// The register_* functions module.cpp calls, one per feature (cpp/bindings/register_*.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace sliceflow::bindings {

void register_agg(pybind11::module_& m);
void register_json(pybind11::module_& m);
void register_json_infer(pybind11::module_& m);
void register_window(pybind11::module_& m);
void register_changes(pybind11::module_& m);
void register_changelog(pybind11::module_& m);
void register_memory(pybind11::module_& m);
void register_state(pybind11::module_& m);
void register_dedup(pybind11::module_& m);
void register_topn(pybind11::module_& m);
void register_hash(pybind11::module_& m);
void register_join(pybind11::module_& m);

}  // namespace sliceflow::bindings
