package runresult

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestResultIsOpenUntilFinished(t *testing.T) {
	var r Result
	done := r.Done()
	select {
	case <-done:
		t.Fatal("Done is closed before Finish")
	default:
	}
	assert.NoError(t, r.Err())

	want := errors.New("stopped")
	r.Finish(want)
	select {
	case <-done: // the channel handed out before Finish is the one closed
	default:
		t.Fatal("Done is open after Finish")
	}
	assert.Equal(t, want, r.Err())
	assert.Equal(t, done, r.Done())
}

func TestResultFinishedBeforeDoneIsAsked(t *testing.T) {
	var r Result
	r.Finish(nil)
	<-r.Done()
	assert.NoError(t, r.Err())
}
