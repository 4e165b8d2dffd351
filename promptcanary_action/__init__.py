"""The GitHub layer of promptcanary: settings, event handling, baselines, reports, publishing."""
