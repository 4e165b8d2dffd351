"""Where every decision is made: the evaluation, the gate, approvals, usage changes."""
