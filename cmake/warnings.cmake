# Warnings are errors for every target of this project (not for dependencies).
function(gpuscan_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion -Wno-missing-field-initializers -Werror)
endfunction()
