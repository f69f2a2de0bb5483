# syntax=docker/dockerfile:1
#
# The Joist controller image: the provider's own binary, started in
# controller mode, so the provider and the controller it deploys are always
# the same version. Published as ghcr.io/joistdev/joist-controller:<version>,
# the default image of the joist_controller resource:
#
#   docker build --build-arg VERSION=0.1.0 -t ghcr.io/joistdev/joist-controller:0.1.0 .
#
# VERSION is the provider release without the leading "v".

ARG GO_VERSION=1.26

# Build on the builder's platform and cross-compile: a static binary needs no
# emulation.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
# Only the sources: bin/ (the Kubernetes binaries) and .sandbox/ are not needed.
COPY *.go ./
COPY internal/ internal/
ARG VERSION=dev
ARG TARGETOS
ARG TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/terraform-provider-joist .

# A distroless static base: CA certificates, /etc/passwd with the nonroot
# user, no shell and no package manager.
FROM gcr.io/distroless/static:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.title="joist-controller" \
      org.opencontainers.image.description="Just-in-time node autoscaling for Amazon EKS, Karpenter v1 API compatible" \
      org.opencontainers.image.ref.name="ghcr.io/joistdev/joist-controller:${VERSION}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="https://github.com/joistdev/terraform-provider-joist" \
      org.opencontainers.image.licenses="MPL-2.0"
COPY --from=build /out/terraform-provider-joist /terraform-provider-joist
# The distroless nonroot user, numeric so a pod with runAsNonRoot: true starts.
USER 65532:65532
ENTRYPOINT ["/terraform-provider-joist", "controller"]
