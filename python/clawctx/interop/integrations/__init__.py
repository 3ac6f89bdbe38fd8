"""Framework hooks, each importing its framework lazily: ``pydantic_ai.history_processor``,
``langchain.trim_messages``, ``openai_agents.input_filter``."""

# The modules are the API, each imported on demand (``from clawctx.interop.integrations
# import langchain``): importing the package imports no framework.
__all__: list[str] = []
