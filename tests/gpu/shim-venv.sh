# Sourced by the GPU scripts (run.sh, fit.sh, doctor-arch.sh): shim_venv VENV WHEELS
# makes VENV, a venv layered over the host's torch venv ($HOST_PYTHON's site-packages,
# read first: the shim's .pth sorts after it), with the shim and pyelftools installed
# from the wheels in WHEELS (no index: the GPU host reaches none).
shim_venv() {
  local venv=$1 wheels=$2 host_site venv_site
  "$HOST_PYTHON" -m venv --without-pip "$venv"
  host_site=$("$HOST_PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  venv_site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  printf 'import site; site.addsitedir(%s)\n' "'$host_site'" >"$venv_site/00-host-venv.pth"
  "$HOST_PYTHON" -m pip install --quiet --no-index --find-links "$wheels" \
    --target "$venv_site" triton-toolchain pyelftools
}
