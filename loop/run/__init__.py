"""The loop's commands and operations: `voiceloop report` (`report`), its subcommands (`cli`), settling runs a
killed process left open (`settle`) and tenant budgets from the command line (`tenancy`).
"""
