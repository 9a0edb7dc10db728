#!/bin/sh
# Runs an Open MPI mpiexec (the arguments) with a session directory of its
# own. Tests run at once, and two mpiexecs that start together race to create
# the top of a shared session directory (TMPDIR/ompi.HOST.UID): the loser
# fails with "unable to create the desired directory ... File exists".
base=$(mktemp -d "${TMPDIR:-/tmp}/aoa-ompi.XXXXXX") || exit 1
OMPI_MCA_orte_tmpdir_base=$base "$@"
status=$?
rm -rf "$base"
exit $status
