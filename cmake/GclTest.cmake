# gcl_add_unit_test(NAME SOURCES src... [LIBS lib...] [TIMEOUT s] [LABELS l...])
#
# One cmocka executable per module, registered with ctest under the label "unit" (plus any
# LABELS given) and a timeout, so that no test can hang CI.
function(gcl_add_unit_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${CMOCKA_INCLUDE_DIR})
  target_link_libraries(${name} PRIVATE ${T_LIBS} ${CMOCKA_LIBRARIES})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "unit;${T_LABELS}")
endfunction()

# The smoke set: multi-process tests of the default tier that .ci/run also runs under
# AddressSanitizer and UBSan (label smoke), beside the unit, fault and fuzz tests: every
# transport (local, shm pipelined and single-copy, host-direct staged, mpi, tcp and ofi across
# namespace hosts), a mismatch, pipelined and data-parallel training, a restart, poprun's own
# runs, the Python package, and the soak's sample of every transport, collective, size and
# layout (soak_quick).
set(GCL_SMOKE_TESTS
    multiproc_allreduce_8x2 multiproc_matrix_4x2 multiproc_matrix_8x4_staged
    multiproc_allreduce_mpi_transport multiproc_allreduce_shm_pipelined
    multiproc_netns_matrix_tcp multiproc_netns_matrix_ofi multiproc_mismatch_count_2 train_data_parallel train_pipeline
    train_restart poprun_run python_api soak_quick)

# gcl_add_script_test(NAME COMMAND cmd... [TIMEOUT s] [LABELS l...] [ENV k=v...] [SERIAL])
#
# A test driven by a command (usually poprun or a shell script under tests/), with a timeout.
# Label full puts it in the full tier (scripts/test --full); every other test is the default
# tier's. A test named in GCL_SMOKE_TESTS gets the label smoke.
function(gcl_add_script_test name)
  cmake_parse_arguments(T "SERIAL" "TIMEOUT" "COMMAND;LABELS;ENV" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  if(name IN_LIST GCL_SMOKE_TESTS)
    list(APPEND T_LABELS smoke)
  endif()
  add_test(NAME ${name} COMMAND ${T_COMMAND})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}")
  if(T_ENV)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${T_ENV}")
  endif()
  if(T_SERIAL)
    set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
  endif()
endfunction()
