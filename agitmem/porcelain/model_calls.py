"""The hook events a client fires around every model call: Gemini CLI's
BeforeModel (as `hook prompt`) and its PreCompress (as `hook pre-compact`,
compressing or not).  Nearly every call has nothing for agitmem to do: the
request holds no compression summary, PreCompress is seen afterwards in the
chat file.  That answer is given here, with the payload and the request's
text only: the rest of the hooks' machinery (porcelain/agent_hooks.py, the
memory, the session state) is imported when there is something to do."""
from __future__ import annotations

from agitmem import agents


def messages(payload: agents.Payload) -> list[object] | None:
    """The request's messages (BeforeModel's `llm_request.messages`)."""
    request = payload.raw.get('llm_request')
    found = request.get('messages') if isinstance(request, dict) else None
    return found if isinstance(found, list) else None


def idle(event: str, payload: agents.Payload) -> str | None:
    """The hook's output when the event asks nothing of agitmem, else
    None (agent_hooks handles it)."""
    if event == 'pre-compact' and payload.agent == 'gemini':
        # Gemini CLI fires PreCompress before every model call, compressing
        # or not: a compression is seen in its chat file at the next prompt
        return agents.envelope(payload.agent, 'pre-compact')
    if event == 'prompt' and payload.event == 'BeforeModel':
        from agitmem.agents import transcript
        found = messages(payload)
        if found is None or not transcript.request_compactions(found):
            return agents.envelope(payload.agent, 'prompt')
    return None
