package platform

// InvalidArgumentError is an adapter's refusal of an argument (a Discord id
// that is not numeric): platform actions answer it as invalid_argument with
// Reason as the message.
type InvalidArgumentError struct{ Reason string }

func (e *InvalidArgumentError) Error() string { return e.Reason }
