package awsquery

import (
	"bytes"
	"encoding/xml"
	"net/http"
)

// WriteResult writes <ActionResponse xmlns><ActionResult>result</ActionResult>
// <ResponseMetadata><RequestId/></ResponseMetadata></ActionResponse>. A nil
// result leaves out the Result element, as IAM does for Delete* calls. The
// result's fields become the children of ActionResult, so result types carry
// no XMLName.
func WriteResult(w http.ResponseWriter, namespace, action, requestID string, result any) {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	response := xml.StartElement{
		Name: xml.Name{Local: action + "Response"},
		Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: namespace}},
	}
	err := enc.EncodeToken(response)
	if err == nil && result != nil {
		err = enc.EncodeElement(result, xml.StartElement{Name: xml.Name{Local: action + "Result"}})
	}
	if err == nil {
		err = enc.EncodeElement(struct {
			RequestID string `xml:"RequestId"`
		}{requestID}, xml.StartElement{Name: xml.Name{Local: "ResponseMetadata"}})
	}
	if err == nil {
		err = enc.EncodeToken(response.End())
	}
	if err == nil {
		err = enc.Flush()
	}
	if err != nil {
		WriteError(w, namespace, requestID, &Error{Status: http.StatusInternalServerError, Code: "InternalFailure", Message: err.Error()})
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/xml")
	h.Set("x-amzn-RequestId", requestID)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}
