# The bot as a container: slim Python, dependencies in a cached layer, a non-root user,
# the journal on a volume, `bot status` as the health check, `bot run` by default.
#   docker build -t aptos-dca-bot .
#   docker run -v bot-data:/data -v "$PWD/config.toml:/config/bot.toml:ro" aptos-dca-bot
# See docs/operations.md ("Docker") and docker-compose.example.yml.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    BOT_CONFIG=/config/bot.toml \
    BOT_JOURNAL__URL=sqlite:////data/bot.db

RUN groupadd --system --gid 10001 bot \
    && useradd --system --uid 10001 --gid bot --home-dir /data --no-create-home \
       --shell /usr/sbin/nologin bot \
    && mkdir -p /data /config \
    && chown bot:bot /data \
    && chmod 0700 /data

WORKDIR /app

# Dependencies first, read from pyproject.toml alone: editing the code keeps this layer.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && pip install --no-cache-dir -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# Then the bot itself (no dependency resolution: they are all installed above).
COPY README.md ./
COPY bot ./bot
COPY strategies ./strategies
RUN pip install --no-cache-dir --no-deps . \
    && rm -rf /app/build /app/*.egg-info

# Numeric, so orchestrators can verify it is not root (runAsNonRoot).
USER 10001:10001
WORKDIR /data
# The journal, the wallet lock and the status file `bot status` reads.
VOLUME ["/data"]

# Exit 0 while the daemon runs and is healthy (its status file is fresh, the watchdog
# verdict is good), 1 otherwise.
HEALTHCHECK --interval=60s --timeout=20s --start-period=120s --retries=3 \
    CMD ["bot", "status"]

# SIGTERM (docker stop) finishes what is in flight: give it `--stop-timeout 90`.
STOPSIGNAL SIGTERM
ENTRYPOINT ["bot"]
CMD ["run"]
