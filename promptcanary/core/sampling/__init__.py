"""``samples: auto``: the e-values and e-BH (``sequential``), the stored pool (``pool``) and the
stage plan that reads it (``sequencer``). Pure: no I/O, no model calls."""
