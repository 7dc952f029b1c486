# SPDX-License-Identifier: MIT
# uplot_notice(UPLOT_DIR OUT): the one-line MIT notice (version, copyright, homepage) appended
# to uPlot wherever it is inlined (the live dashboard and the run report), read from its package.
function(uplot_notice uplot_dir out)
  set(version "")
  if(EXISTS "${uplot_dir}/package.json")
    file(READ "${uplot_dir}/package.json" pkg)
    string(JSON version ERROR_VARIABLE ignored GET "${pkg}" version)
  endif()
  set(copyright "")
  if(EXISTS "${uplot_dir}/LICENSE")
    file(STRINGS "${uplot_dir}/LICENSE" copyright REGEX "^Copyright" LIMIT_COUNT 1)
  endif()
  set(${out} "/*! uPlot ${version} | MIT License | ${copyright} | https://github.com/leeoniya/uPlot */"
      PARENT_SCOPE)
endfunction()
