# monitor_screenshot_real_trace: records `weft demo` to a trace (WEFT_TRACE), renders it with
# `weft-monitor --screenshot`, and checks the PNG shows timeline rows.
# Variables: WEFT, MONITOR, CHECK (executables), WORK (a scratch directory).
foreach(variable WEFT MONITOR CHECK WORK)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "screenshot_real_trace.cmake: -D${variable}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(trace "${WORK}/demo.wefttrace")
set(shot "${WORK}/shot.png")

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${result}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok\n${out}")
endfunction()

run_step("recording weft demo" ${CMAKE_COMMAND} -E env "WEFT_TRACE=${trace}" "${WEFT}" demo)
if(NOT EXISTS "${trace}")
  message(FATAL_ERROR "weft demo ran with WEFT_TRACE=${trace} but wrote no trace there")
endif()
run_step("weft-monitor --screenshot" "${MONITOR}" --screenshot "${shot}" "${trace}")
run_step("checking the screenshot" "${CHECK}" "${shot}" 3 16)
