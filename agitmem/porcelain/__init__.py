"""The porcelain: the memory operations every command and hook shares.

Commands parse, call these, print.  Every write of a memory ref goes
through `porcelain.write.save`; reads of the working tree's memory go
through `porcelain.read`.  Nothing here is imported at package level: the
hot hooks pick only what they use (and so never pay for pygit2)."""
