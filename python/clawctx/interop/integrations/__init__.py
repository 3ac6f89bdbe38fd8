"""Framework hooks, each importing its framework lazily: ``pydantic_ai.history_processor``,
``langchain.trim_messages``, ``openai_agents.input_filter``."""
