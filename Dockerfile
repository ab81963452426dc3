# Conventional image of the bot: slim Python, dependencies in a cached layer, non-root.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    BOT_JOURNAL__URL=sqlite:////var/lib/bot/bot.db

RUN useradd --system --create-home --home-dir /home/bot bot \
    && mkdir -p /var/lib/bot && chown bot:bot /var/lib/bot

WORKDIR /app
# Dependencies first, so code changes do not invalidate this layer.
COPY pyproject.toml README.md ./
COPY bot/__init__.py bot/__init__.py
RUN pip install .
COPY bot bot
COPY strategies strategies
RUN pip install --no-deps .

USER bot
VOLUME ["/var/lib/bot"]
ENTRYPOINT ["bot"]
CMD ["--help"]
