#!/bin/sh
# agitmem shim: before a task starts, print the memory block for the agent's
# system prompt (the seed's pre_task.sh). Set AGENT_EVENT_SOURCE=compact
# after a compaction. Thin: everything happens in `agitmem hook`.
exec agitmem hook session-start --agent shell
