"""The measurements, a library the other rooms use and that uses none of them: the attacks and their registry
(attackers), agreement of two clusterings, privacy metrics and distortion, stress and neighbourhoods. The
observer that applies them to a finished run is ppcsim.run.observer."""
