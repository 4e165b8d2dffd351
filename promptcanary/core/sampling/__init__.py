"""``samples: auto``, bottom up: ``sequential`` (one look's decisions: e-values, futility, e-BH),
``pool`` (the evidence a baseline stores), ``sequencer`` (that pool read per prompt and the stage
plan; the only one importing the other two). Pure: no I/O, no model calls."""
