# CTest registration of the deployment checks (Dockerfile, Helm chart, Kubernetes
# manifests, dashboards and alerts), included from the top-level CMakeLists.txt.
# Label "deploy": ctest -L deploy. A missing tool skips a check (exit 77), except under
# CI=true, where it fails. deploy.setup builds chartcheck once (a fixture) so the others
# can run in parallel.
set(DEPLOY_CHECKS ${CMAKE_SOURCE_DIR}/deploy/checks)

add_test(NAME deploy.setup COMMAND ${DEPLOY_CHECKS}/setup.sh)
set_tests_properties(deploy.setup PROPERTIES FIXTURES_SETUP deploy_tools TIMEOUT 600)

add_test(NAME deploy.chart
  COMMAND ${DEPLOY_CHECKS}/chart.sh $<TARGET_FILE:lite2onnx-server>)
add_test(NAME deploy.manifests
  COMMAND ${DEPLOY_CHECKS}/manifests.sh $<TARGET_FILE:lite2onnx-server>)
add_test(NAME deploy.metrics
  COMMAND ${DEPLOY_CHECKS}/metrics.sh $<TARGET_FILE:lite2onnx-server>
          ${CMAKE_BINARY_DIR}/examples/mini_mobilenet.tflite)
add_test(NAME deploy.values_schema COMMAND ${DEPLOY_CHECKS}/values-schema.sh)
add_test(NAME deploy.yamllint COMMAND ${DEPLOY_CHECKS}/yamllint.sh)
add_test(NAME deploy.dockerfile COMMAND ${DEPLOY_CHECKS}/dockerfile.sh)
add_test(NAME deploy.compose COMMAND ${DEPLOY_CHECKS}/compose.sh)
# The runtime image's package list still matches what the built binaries link.
add_test(NAME deploy.runtime_packages
  COMMAND ${CMAKE_SOURCE_DIR}/deploy/derive-runtime-packages.sh
          --check ${CMAKE_SOURCE_DIR}/deploy/runtime-packages.txt
          $<TARGET_FILE:lite2onnx-server> $<TARGET_FILE:lite2onnx-worker> $<TARGET_FILE:lite2onnx>
          $<TARGET_FILE:lite2onnx-remote>)

set_tests_properties(deploy.chart deploy.manifests deploy.metrics deploy.values_schema
  deploy.yamllint deploy.dockerfile deploy.compose deploy.runtime_packages
  PROPERTIES FIXTURES_REQUIRED deploy_tools)
set_tests_properties(deploy.setup deploy.chart deploy.manifests deploy.metrics deploy.values_schema
  deploy.yamllint deploy.dockerfile deploy.compose deploy.runtime_packages
  PROPERTIES LABELS deploy SKIP_RETURN_CODE 77)
set_tests_properties(deploy.chart deploy.manifests deploy.metrics deploy.values_schema
  deploy.yamllint deploy.dockerfile deploy.compose deploy.runtime_packages PROPERTIES TIMEOUT 120)
