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

# gcl_add_script_test(NAME COMMAND cmd... [TIMEOUT s] [LABELS l...] [ENV k=v...] [SERIAL])
#
# A test driven by a command (usually poprun or a shell script under tests/), with a timeout.
function(gcl_add_script_test name)
  cmake_parse_arguments(T "SERIAL" "TIMEOUT" "COMMAND;LABELS;ENV" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
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
