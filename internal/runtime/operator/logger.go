package operator

import (
	"io"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// NewLogger returns a JSON zap logger at LOG_LEVEL writing to w.
func NewLogger(level string, w io.Writer) logr.Logger {
	lvl := zapcore.InfoLevel
	switch level {
	case "debug":
		lvl = zapcore.DebugLevel
	case "error":
		lvl = zapcore.ErrorLevel
	}
	enc := zapcore.EncoderConfig{
		TimeKey: "time", LevelKey: "level", NameKey: "logger", CallerKey: "caller", MessageKey: "message",
		StacktraceKey: "stacktrace", LineEnding: zapcore.DefaultLineEnding,
		EncodeLevel: zapcore.LowercaseLevelEncoder, EncodeTime: zapcore.ISO8601TimeEncoder,
		EncodeDuration: zapcore.StringDurationEncoder, EncodeCaller: zapcore.ShortCallerEncoder,
	}
	return crzap.New(
		crzap.WriteTo(w),
		crzap.Level(lvl),
		crzap.StacktraceLevel(zapcore.DPanicLevel),
		crzap.Encoder(zapcore.NewJSONEncoder(enc)),
	)
}
