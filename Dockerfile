FROM node:20-bookworm-slim
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY bin ./bin
COPY src ./src
COPY machines ./machines
COPY tsconfig.json ./
ENV HOST=0.0.0.0 PORT=8080 WEIR_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
CMD ["node", "bin/weir.js", "serve"]
