package s3

// For the tests: the size of a part, and the tries of a request.
const (
	PartSize    = partSize
	MaxAttempts = maxAttempts
)
