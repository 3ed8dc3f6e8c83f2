import smtplib


def send_receipt(address, body):
    """Email a receipt to a customer over SMTP."""
    with smtplib.SMTP("localhost") as smtp:
        smtp.sendmail("shop@example.com", [address], body)
