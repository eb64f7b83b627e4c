"""The slow tier: what ``pytest -m "not slow"`` leaves out, and why.

The fast tier is for the edit-test loop (about a minute on a quiet 2-core machine); CI runs
everything.  A file is slow as a whole where most of its time is one kind of work (Z3 proofs,
subprocesses, compilers, differential fuzzing); a single test where the rest of its file is
quick.  tests/conftest.py marks the collected items from these tables, and
tests/project/test_tiers.py checks that every entry names a file or test that exists."""

# tests/<path>: why its tests are slow
SLOW_FILES = {
    "proofs/test_proofs.py": "every rule's Z3 proof",
    "capture/test_serialize.py": "save / load round trips in fresh interpreters",
    "cli/test_cli.py": "symshape check in child processes",
    "cli/test_fix_edits.py": "symshape check --fix in child processes",
    "cli/test_fix_safety.py": "hostile projects in child processes",
    "cli/test_check_user_modules.py": "symshape check in child processes",
    "cli/test_fix_property.py": "Hypothesis over projects checked in child processes",
    "engine/test_annotations.py": "annotated projects checked in child processes",
    "project/test_layers.py": "every module imported first in a fresh interpreter",
    "project/test_docs.py": "the documentation's examples and site build",
    "codegen/cuda/test_cuda_reductions.py": "every launch geometry under the CUDA emulator",
    "codegen/numba/test_numba_backend.py": "numba compilations",
    "codegen/numba/test_numba_models.py": "numba compilations of the corpus models",
    "codegen/numba/test_numba_random_programs.py": "numba compilations of random programs",
    "codegen/numba/test_loops_numba.py": "numba compilations of loop functions",
    "capture/test_op_traits.py": "every op traced to check its traits",
    "e2e/test_random_programs.py": "differential fuzzing (Hypothesis)",
    "e2e/test_properties.py": "differential fuzzing (Hypothesis)",
    "capture/test_numpy_coverage.py": "the NumPy coverage survey",
    "contract/test_contract_meaning.py": "Z3 meaning of the contract on many programs",
    "codegen/dask/test_dask.py": "dask schedulers",
    "capture/test_array_api.py": "the array API differential suite",
    "capture/test_statistics_ops.py": "every rank and axis against NumPy",
    "capture/test_views.py": "differential fuzzing of views (Hypothesis)",
    "reallibs/test_reallibs.py": "64 real library entry points exported and compiled at 3 sizes",
}

# tests/<path>::<test name>: why this one test is slow
SLOW_TESTS = {
    "capture/test_sizes_as_values.py::test_random_size_expressions_used_as_data_match_eager":
        "differential fuzzing (Hypothesis)",
    "codegen/cuda/test_cuda_fuzz.py::test_programs_match_numpy_in_every_layout":
        "differential fuzzing under the CUDA emulator",
    "contract/test_contract_decision.py::test_decided_comparisons_agree_with_brute_force":
        "brute force over boxes",
    "engine/test_bounds_vs_jax.py::test_never_wrong_and_never_looser_than_jax":
        "the bounds corpus",
    "e2e/test_corpus_models.py::test_cnn_with_im2col_matches_eager_for_every_batch":
        "numba compilation of a CNN",
    "jit/test_jit_faults.py::test_generated_source_lives_as_long_as_its_program":
        "garbage collection of many programs",
    "cli/test_job_summary.py::test_no_summary_without_the_variable_or_in_other_formats":
        "symshape check in child processes",
    "cli/test_job_summary.py::test_zoo_summary_table": "symshape check in child processes",
    "contract/test_index_bounds.py::test_random_constant_indices_against_the_contract":
        "differential fuzzing (Hypothesis)",
    "codegen/cuda/test_cuda_columns.py::test_random_column_reductions_match_numpy":
        "differential fuzzing under the CUDA emulator",
    "codegen/numpy/test_compile.py::test_random_programs_equal_module":
        "differential fuzzing (Hypothesis)",
    "codegen/test_function_writer.py::test_export_and_module_retain_no_memory_per_build":
        "thousands of builds",
    "codegen/onnx/test_onnx_fuzz.py::test_random_programs_in_onnxruntime_match_eager":
        "differential fuzzing in onnxruntime (Hypothesis)",
}


def slow_reason(relpath: str, name: str):
    """Why the test ``name`` (without parameters) of ``tests/<relpath>`` is slow, or None."""
    return SLOW_FILES.get(relpath) or SLOW_TESTS.get("%s::%s" % (relpath, name))
