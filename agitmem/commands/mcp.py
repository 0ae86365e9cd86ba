"""`agitmem mcp`: the memory tools (porcelain/mcp_tools.py) as a stdio MCP
server, on the official SDK (the optional extra `agitmem[mcp]`).

A tool call that fails answers one line with isError, never a traceback,
and the server goes on serving."""
from __future__ import annotations

import sys
from typing import Any

from agitmem.errors import AgitmemError

INSTALL_HINT = (
    'agitmem mcp needs the MCP SDK: pip install "agitmem[mcp]" '
    '(or `pipx inject agitmem mcp`, `uv tool install "agitmem[mcp]"`)'
)


def _one_line(e: BaseException) -> str:
    from agitmem import render
    if isinstance(e, AgitmemError):
        return f'agitmem: {render.controls_line(str(e))}'
    # not ours: its kind and message, still one line, still no traceback
    return f'agitmem: internal error: {type(e).__name__}: {render.controls_line(str(e))}'


def mcp(version: str) -> int:
    try:
        import anyio
        import mcp_types as types
        from mcp.server.lowlevel import Server
        from mcp.server.stdio import stdio_server
    except ImportError:
        print(f'agitmem: {INSTALL_HINT}', file=sys.stderr)
        return 2
    from agitmem import mcp_wire
    from agitmem import repo as repo_mod
    from agitmem.porcelain import mcp_tools

    # where the server runs: the repository it was started in.  The write
    # path is imported now, so the first call pays no import.
    cwd = repo_mod.here()
    import agitmem.porcelain.write  # noqa: F401

    tools = [
        types.Tool(name=t.name, description=t.description, input_schema=t.schema)
        for t in mcp_tools.TOOLS
    ]
    # the porcelain is synchronous, and its git helpers keep per-process
    # state: one call at a time, run to its end in the loop (a client that
    # sends its calls and closes stdin still gets every answer)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    def run(name: str, args: object) -> types.CallToolResult:
        try:
            answer = mcp_tools.call(name, args, cwd=cwd)
        except Exception as e:
            return types.CallToolResult(
                content=[types.TextContent(text=_one_line(e))], is_error=True,
            )
        return types.CallToolResult(
            content=[types.TextContent(text=answer.text)],
            structured_content=answer.data,
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return run(params.name, params.arguments)

    server: Server[Any] = Server(
        'agitmem', version=version,
        instructions=(
            'agitmem keeps this agent\'s working memory in git: update the state '
            'with state_set at every meaningful step, search older memory with recall.'
        ),
        on_list_tools=list_tools, on_call_tool=call_tool,
    )

    # agitmem reads stdin itself so that every request line is answered,
    # even one the SDK cannot read (mcp_wire.py)
    lines = mcp_wire.Lines(mcp_wire.claim_stdin())

    async def serve() -> None:
        # and writes stdout through mcp_wire.Escaped: the SDK echoes ids raw
        async with stdio_server(stdin=lines, stdout=mcp_wire.claim_stdout()) as (read, write):  # type: ignore[arg-type]
            screened = mcp_wire.Screened(lines, read, write)
            await server.run(screened, screened.write, server.create_initialization_options())

    try:
        anyio.run(serve)
    except KeyboardInterrupt:
        pass
    return 0
