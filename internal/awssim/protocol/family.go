package protocol

// Family is an AWS wire-protocol family; it decides how operations are named
// in a request and how errors are written.
type Family int

const (
	// EC2Query is EC2's query protocol: form body, XML responses, errors in <Response><Errors>.
	EC2Query Family = iota
	// AWSQuery is the query protocol of IAM and STS: form body, XML, errors in <ErrorResponse>.
	AWSQuery
	// JSON is awsJson1.0/1.1: X-Amz-Target names the operation, errors carry __type.
	JSON
	// RESTJSON is restJson1: the method and path name the operation, errors in x-amzn-ErrorType.
	RESTJSON
)

// FamilyOf returns the protocol family of a SigV4 signing name.
func FamilyOf(service string) Family {
	switch service {
	case "ec2":
		return EC2Query
	case "iam", "sts":
		return AWSQuery
	case "eks":
		return RESTJSON
	default: // sqs, events, ssm, pricing
		return JSON
	}
}

// ThrottleCode is the error code a service family uses when it throttles a caller.
func (f Family) ThrottleCode() string {
	switch f {
	case EC2Query:
		return "RequestLimitExceeded"
	case AWSQuery:
		return "Throttling"
	default:
		return "ThrottlingException"
	}
}

// ThrottleStatus is the HTTP status that accompanies ThrottleCode.
func (f Family) ThrottleStatus() int {
	switch f {
	case EC2Query:
		return 503
	case RESTJSON:
		return 429
	default:
		return 400
	}
}

// InternalErrorCode is the error code a service family uses for a server-side failure.
func (f Family) InternalErrorCode() string {
	switch f {
	case EC2Query:
		return "InternalError"
	case RESTJSON:
		return "ServerException"
	default:
		return "InternalFailure"
	}
}

// AccessDenied is the error code and HTTP status a service family answers
// a caller its policy does not allow with.
func (f Family) AccessDenied() (string, int) {
	switch f {
	case EC2Query:
		return "UnauthorizedOperation", 403
	case AWSQuery:
		return "AccessDenied", 403
	case RESTJSON:
		return "AccessDeniedException", 403
	default:
		return "AccessDeniedException", 400
	}
}
