"""Where baselines live: a data branch, a workflow artifact, a workspace folder, or nowhere."""
