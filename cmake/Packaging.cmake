# SPDX-License-Identifier: MIT
# The Debian package (`cpack -G DEB` in a build folder, docs/install.md): the gpumon executable,
# its man page (from --help, by help2man), the systemd unit with the package's path, and deploy/
# (Prometheus config, alert rules, Grafana dashboard) under share/gpumon. The C++ client
# library and its headers, installed by src/client, come with it.

# The man page: help2man runs `gpumon --help` and `gpumon --version` after each build of gpumon.
find_program(GPUMON_HELP2MAN help2man)
if(GPUMON_HELP2MAN)
  set(_man ${CMAKE_BINARY_DIR}/gpumon.1)
  add_custom_command(OUTPUT ${_man}
    COMMAND ${GPUMON_HELP2MAN} --no-info --no-discard-stderr
            --name "GPU monitoring for PyTorch training" --output ${_man} $<TARGET_FILE:gpumon>
    DEPENDS gpumon
    COMMENT "Writing the gpumon man page from its --help")
  add_custom_target(gpumon_man ALL DEPENDS ${_man})
  install(FILES ${_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "help2man not found: the package has no man page (apt-get install help2man)")
endif()

# The unit as deploy/ has it, starting the installed executable rather than /usr/local/bin's, in
# PREFIX/lib/systemd/system (systemd reads /usr/lib/ and /usr/local/lib/ alike);
# written at install time, when the prefix is known (cpack installs into /usr).
install(CODE "
  file(READ \"${PROJECT_SOURCE_DIR}/deploy/gpumon.service\" unit)
  string(REPLACE ExecStart=/usr/local/bin/gpumon
         \"ExecStart=\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/gpumon\" unit \"\${unit}\")
  file(WRITE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/gpumon.service\"
       \"\${unit}\")
  message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/gpumon.service\")")
install(FILES ${PROJECT_SOURCE_DIR}/deploy/README.md ${PROJECT_SOURCE_DIR}/deploy/prometheus.yml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/gpumon/deploy)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/deploy/alerts ${PROJECT_SOURCE_DIR}/deploy/grafana
        DESTINATION ${CMAKE_INSTALL_DATADIR}/gpumon/deploy)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpumon)
set(CPACK_PACKAGE_VENDOR "gpumon")
set(CPACK_PACKAGE_CONTACT "gpumon maintainers <gpumon@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU monitoring for PyTorch training")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # gpumon_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends: from the libraries gpumon links
set(CPACK_STRIP_FILES ON)  # as Debian ships binaries; the build folder keeps the symbols
# NVML comes from the NVIDIA driver, loaded at run time: without it gpumon says so.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nvidia-driver | nvidia-tesla-driver")
include(CPack)
