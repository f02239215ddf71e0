# Source this file from the checkout's root (". scripts/env.sh") after scripts/setup.sh:
# where setup.sh installed f2loopy into the checkout's virtual environment .venv (a system
# Python marked externally managed, PEP 668), it activates that environment in the current
# shell so that `f2loopy` and `python3` are the ones with f2loopy; elsewhere it does nothing.
# POSIX sh, bash and zsh; it never exits the shell that sources it.
if [ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ] && [ -f .venv/.f2loopy-setup ]; then
  . .venv/bin/activate
fi
