"""Running scenarios: party processes and the coordinator (launcher) behind counting relays, in one process
(inprocess), sweeps, a Dask cluster, the output folder, credentials, the MPC helper, the observer that measures
a finished run, and the conformance check of a disguise method."""
